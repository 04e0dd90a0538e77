/**
 * How the CLI ends: the exit codes API.md fixes (0 success, 1 an API error, 2 bad usage)
 * plus 130 for a follow detached by Ctrl-C, and the failure every fallible step returns,
 * carrying its exit code and the lines a person reads on stderr.
 */
import type { Result } from "@/domain/result";

export const EXIT = { ok: 0, api: 1, usage: 2, interrupted: 130 } as const;

export interface CliFailure {
  exit: 1 | 2 | 130;
  /** One line: what went wrong (an API error: the API's own message). */
  message: string;
  /** Further lines: the API's issues, or a hint. */
  details?: string[];
  /** The HTTP status when the API answered (a refusal), absent when it was not reached. */
  status?: number;
}

export type CliResult<T = void> = Result<T, CliFailure>;

export function usageError(message: string, details?: string[]): { ok: false; reason: CliFailure } {
  return { ok: false, reason: { exit: EXIT.usage, message, ...(details ? { details } : {}) } };
}

export function apiError(message: string, details?: string[]): { ok: false; reason: CliFailure } {
  return { ok: false, reason: { exit: EXIT.api, message, ...(details ? { details } : {}) } };
}

export const done: { ok: true; value: undefined } = { ok: true, value: undefined };

/** Shell-safe spelling of an argument for the commands the CLI suggests. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:=@-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

export function printFailure(f: CliFailure, stderr: NodeJS.WritableStream): void {
  stderr.write(`cellflow: ${f.message}\n`);
  for (const line of f.details ?? []) stderr.write(`  ${line}\n`);
}
