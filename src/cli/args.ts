/**
 * Command lines read with Node's `util.parseArgs`, strictly: an unknown flag, a flag
 * missing its value, a value given to a switch, or too few or too many arguments is bad
 * usage (exit 2) with one line saying which, never a guess. `--help` is every command's.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { type CliResult, usageError } from "./failure";

type Options = NonNullable<ParseArgsConfig["options"]>;
const HELP = { help: { type: "boolean", short: "h" } } as const;
type WithHelp<O extends Options> = O & typeof HELP;
type Values<O extends Options> = ReturnType<
  typeof parseArgs<{ options: WithHelp<O>; strict: true; allowPositionals: true }>
>["values"];

export interface CommandSpec<O extends Options> {
  name: string;
  /** Names of the positional arguments, all required, e.g. ["table", "file.csv"]. */
  positionals: readonly string[];
  options: O;
}

export interface Parsed<O extends Options> {
  help: boolean;
  positionals: string[];
  values: Values<O>;
}

export function parseCommand<O extends Options>(
  spec: CommandSpec<O>,
  argv: readonly string[],
): CliResult<Parsed<O>> {
  let parsed: { values: Values<O>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { ...spec.options, ...HELP } as WithHelp<O>,
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    // parseArgs says e.g. "Unknown option '--bogus'"; the hint to --help is ours.
    const message = (err instanceof Error ? err.message : String(err))
      .split("\n")[0]
      ?.replace(/\. To specify a positional argument.*$/, "");
    return usageError(`${spec.name}: ${message}`, [`cellflow ${spec.name} --help`]);
  }
  if ((parsed.values as { help?: boolean }).help === true)
    return { ok: true, value: { help: true, positionals: [], values: parsed.values } };
  const got = parsed.positionals;
  if (got.length < spec.positionals.length) {
    const missing = spec.positionals.slice(got.length).map((p) => `<${p}>`);
    return usageError(`${spec.name}: missing ${missing.join(" ")}`, [
      `cellflow ${spec.name} --help`,
    ]);
  }
  if (got.length > spec.positionals.length)
    return usageError(`${spec.name}: unexpected argument "${got[spec.positionals.length]}"`, [
      `cellflow ${spec.name} --help`,
    ]);
  return { ok: true, value: { help: false, positionals: got, values: parsed.values } };
}

/** A whole number flag ≥ `min`; absent → undefined. */
export function wholeNumber(
  flag: string,
  raw: string | undefined,
  min: number,
): CliResult<number | undefined> {
  if (raw === undefined) return { ok: true, value: undefined };
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min)
    return usageError(`--${flag} takes a whole number ≥ ${min}, not "${raw}"`);
  return { ok: true, value: n };
}

/** A positive credit amount, to 1/1000 of a credit (as credits are kept): `1`, `0.5`, `2.125`. */
export function creditAmount(flag: string, raw: string | undefined): CliResult<number | undefined> {
  if (raw === undefined) return { ok: true, value: undefined };
  const n = Number(raw);
  if (!/^\d+(\.\d{1,3})?$/.test(raw.trim()) || !(n > 0) || n > 1_000_000_000)
    return usageError(
      `--${flag} takes a number of credits > 0 with at most three decimals, not "${raw}"`,
    );
  return { ok: true, value: n };
}
