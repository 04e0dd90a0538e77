/**
 * Installs an in-memory trigger.dev resource catalog, so task definitions imported after
 * this register their run functions where a test can call them (what the SDK's own test
 * setup does). Import the task modules dynamically, after calling this.
 */
import { resourceCatalog, type TaskMetadataWithFunctions } from "@trigger.dev/core/v3";
import { StandardResourceCatalog } from "@trigger.dev/core/v3/workers";

export function installTaskCatalog(): void {
  resourceCatalog.setGlobalResourceCatalog(new StandardResourceCatalog());
  resourceCatalog.setCurrentFileContext("__test__.ts", "__test__");
}

export function catalogTask(id: string): TaskMetadataWithFunctions {
  const task = resourceCatalog.getTask(id);
  if (!task) throw new Error(`task ${id} is not in the catalog`);
  return task;
}
