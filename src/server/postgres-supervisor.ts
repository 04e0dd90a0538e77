/**
 * Keeps `npm start`'s embedded Postgres up. Invariant: the server never carries on
 * without its database: a postmaster exit the server did not ask for (an OOM kill, an
 * operator's pg_ctl, a crash) is answered by starting it again on the same data and port;
 * when that keeps failing, or Postgres keeps dying, the server is told to stop, with the
 * reason. Everything else (pools, listeners, graphile-worker) reconnects by itself once
 * the database answers again (see crash-policy.ts).
 */
import {
  type EmbeddedOptions,
  type EmbeddedPostgres,
  type PostgresExit,
  startEmbeddedPostgres,
} from "@db/embedded";
import type { Logger } from "@/config/log";
import { pause } from "@/domain/sleep";

/** Start attempts after one unexpected exit, and the pause before each retry. */
const RESTART_DELAYS_MS = [0, 500, 1_000, 2_000, 4_000];
/** More unexpected exits than this within RESTART_WINDOW_MS and the server gives up. */
const MAX_EXITS = 3;
const RESTART_WINDOW_MS = 10 * 60_000;

export interface SupervisedPostgres {
  /** The postmaster running now. */
  current(): EmbeddedPostgres;
  /** Stops watching (a later exit is expected) and stops Postgres. */
  stop(): Promise<void>;
}

export interface SupervisorOptions extends EmbeddedOptions {
  logger: Logger;
  say(line: string): void;
  /** Postgres is gone for good: the server should stop, saying why. */
  onGiveUp(reason: string): void;
}

function describeExit(exit: PostgresExit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
}

export async function startSupervisedPostgres(
  opts: SupervisorOptions,
): Promise<SupervisedPostgres> {
  const { logger, say, onGiveUp, ...embedded } = opts;
  let pg = await startEmbeddedPostgres(embedded);
  let stopped = false;
  // Wakes a restart waiting between attempts, so a shutdown does not wait out the pause.
  const halt = new AbortController();
  let restarting: Promise<void> | undefined;
  const wait = (ms: number) => pause(ms, halt.signal);
  const exits: number[] = [];

  const restart = async (lost: EmbeddedPostgres, exit: PostgresExit): Promise<void> => {
    const now = Date.now();
    exits.push(now);
    while (exits[0] !== undefined && now - exits[0] > RESTART_WINDOW_MS) exits.shift();
    logger.error(
      { pid: lost.pid, code: exit.code, signal: exit.signal },
      "embedded PostgreSQL exited unexpectedly",
    );
    if (exits.length > MAX_EXITS) {
      onGiveUp(
        `PostgreSQL exited unexpectedly ${exits.length} times in ${RESTART_WINDOW_MS / 60_000} minutes (last: ${describeExit(exit)})`,
      );
      return;
    }
    say(`PostgreSQL (pid ${lost.pid}) exited unexpectedly (${describeExit(exit)}); restarting it`);
    let lastError = "";
    for (const delay of RESTART_DELAYS_MS) {
      if (delay > 0) await wait(delay);
      if (stopped) return;
      try {
        // The cluster must still be there: never initialise an empty one in its place.
        const next = await startEmbeddedPostgres({ ...embedded, existingOnly: true });
        if (stopped) {
          await next.stop();
          return;
        }
        pg = next;
        watch(next);
        say(`PostgreSQL restarted (pid ${next.pid})`);
        return;
      } catch (err) {
        // Backends of a killed postmaster can hold its shared memory for a moment: retry.
        lastError = err instanceof Error ? err.message : String(err);
        logger.warn({ err }, "restarting the embedded PostgreSQL failed");
      }
    }
    onGiveUp(`PostgreSQL could not be restarted: ${lastError.split("\n")[0]}`);
  };

  const watch = (instance: EmbeddedPostgres) => {
    void instance.exited.then((exit) => {
      if (stopped || exit.requested) return;
      restarting = restart(instance, exit)
        .catch((err: unknown) => onGiveUp(`PostgreSQL could not be restarted: ${String(err)}`))
        .finally(() => {
          restarting = undefined;
        });
    });
  };
  watch(pg);

  return {
    current: () => pg,
    async stop() {
      stopped = true;
      halt.abort();
      // A restart in flight stops what it started itself; wait for it, so nothing outlives us.
      await restarting;
      await pg.stop();
    },
  };
}
