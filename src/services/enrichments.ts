/**
 * The enrichment catalog as the API shows it. Invariant: the listing is the registry's
 * declarations, field for field, so what a group may map is exactly what runs.
 */
import type { EnrichmentList } from "@/contracts/enrichments";
import type { Failure } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { listEnrichments as builtIns } from "@/enrichments/registry";
import type { ServiceContext } from "./context";

/** The same for every workspace today; the context is taken so per-workspace ones can follow. */
export function listEnrichments(_ctx: ServiceContext): Result<EnrichmentList, Failure> {
  return {
    ok: true,
    value: {
      enrichments: builtIns().map((e) => ({
        id: e.id,
        name: e.name,
        description: e.description,
        cost: e.cost,
        inputs: e.inputs.map((i) => ({
          id: i.id,
          type: i.type,
          required: i.required,
          description: i.description,
        })),
        outputs: e.outputs.map((o) => ({ id: o.id, type: o.type, description: o.description })),
      })),
    },
  };
}
