/**
 * Input schemas and normalizers the built-ins share. Invariant: schemas check types and
 * sizes only (a wrongly typed input is a mapping mistake, an error); whether text makes
 * sense (an address, a number) is for providers to judge, and nonsense is "nothing found".
 */
import { z } from "zod";

/** Text of at most `max` characters; a number (a phone column typed number) is taken as text. */
export const text = (max: number) =>
  z.preprocess(
    (v) => (typeof v === "number" && Number.isFinite(v) ? String(v) : v),
    z.string("must be text").trim().max(max, `must be at most ${max} characters`),
  );

const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The registrable-looking host name in a domain, URL or e-mail address, lower case and
 * without `www.`; null when there is none (an IP address counts as none).
 */
export function domainOf(value: string): string | null {
  let s = value.trim().toLowerCase();
  const at = s.lastIndexOf("@");
  if (at >= 0 && !s.includes("://")) s = s.slice(at + 1);
  if (!/^[a-z][a-z0-9+.-]*:\/\//.test(s)) s = `http://${s}`;
  let host: string;
  try {
    host = new URL(s).hostname;
  } catch {
    return null;
  }
  host = host.replace(/\.$/, "").replace(/^www\./, "");
  const labels = host.split(".");
  if (host.length > 253 || labels.length < 2) return null;
  if (!labels.every((l) => HOST_LABEL.test(l))) return null;
  const tld = labels[labels.length - 1] ?? "";
  // A numeric last label is an IPv4 address, not a domain.
  return /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/.test(tld) ? host : null;
}
