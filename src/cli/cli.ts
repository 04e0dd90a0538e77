/**
 * The `cellflow` command line, from arguments to an exit code. Guarantees: exactly one
 * exit code per invocation, as API.md fixes them (0 success, 1 an API error, 2 bad
 * usage; 130 a follow detached by Ctrl-C); failures are printed on stderr as one line
 * (the API's own message) and their details; nothing is sent before the command line and
 * the environment have been checked.
 */

import { eventsCommand } from "./commands/events";
import { exportCommand } from "./commands/export-csv";
import { importCommand } from "./commands/import-csv";
import { rowsCommand } from "./commands/rows";
import { runCommand } from "./commands/run";
import { stopCommand } from "./commands/stop";
import { tablesCommand } from "./commands/tables";
import type { CliContext } from "./context";
import { type CliResult, done, EXIT, printFailure, usageError } from "./failure";
import { GENERAL } from "./help";

type Command = (argv: readonly string[], ctx: CliContext) => Promise<CliResult>;

const COMMANDS: Record<string, Command> = {
  tables: tablesCommand,
  import: importCommand,
  export: exportCommand,
  run: runCommand,
  stop: stopCommand,
  rows: rowsCommand,
  events: eventsCommand,
};

export async function cli(argv: readonly string[], ctx: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  let result: CliResult;
  if (name === undefined) {
    ctx.stderr.write(`${GENERAL}\n`);
    return EXIT.usage;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    const about = rest[0] && Object.hasOwn(COMMANDS, rest[0]) ? COMMANDS[rest[0]] : undefined;
    if (about) result = await about(["--help"], ctx);
    else {
      ctx.stdout.write(`${GENERAL}\n`);
      result = done;
    }
  } else {
    const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
    result = command
      ? await command(rest, ctx)
      : usageError(`unknown command "${name}"`, [
          `commands: ${Object.keys(COMMANDS).join(", ")} (cellflow --help)`,
        ]);
  }
  if (result.ok) return EXIT.ok;
  printFailure(result.reason, ctx.stderr);
  return result.reason.exit;
}
