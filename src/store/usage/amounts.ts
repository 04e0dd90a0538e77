/** Credits are kept in 1/1000 of a credit (an LLM call costs a fraction); the API shows credits. */
import { type SQL, sql } from "drizzle-orm";

export const milliOf = (credits: number): number => Math.round(credits * 1000);

/** The first day of this UTC month: what `workspaces.credits_month` names. */
export const MONTH = sql`date_trunc('month', now() at time zone 'utc')::date`;

/** A workspace's (alias w) milli-credits charged this month. */
export const usedThisMonthMilli = sql`(case when w.credits_month = ${MONTH} then w.used_milli else 0 end)`;

/** Milli-credits (a bigint expression) as credits, with up to three decimals. */
export const asCredits = (milli: SQL): SQL => sql`(${milli})::float8 / 1000`;
