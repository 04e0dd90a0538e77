/**
 * email_domain: the domain of an e-mail address, whether it is a free-mail provider's, and
 * whether the address is a role account (info@, sales@ …). Offline: no request leaves the
 * process, so it is free and never fails; an address without a usable domain is "nothing
 * found".
 */
import { z } from "zod";
import { domainOf, text } from "./fields";
import type { Enrichment } from "./types";

/** Consumer mailbox providers: an address here says nothing about the person's company. */
const FREE_MAIL = new Set([
  "gmail.com",
  "googlemail.com",
  "yahoo.com",
  "yahoo.co.uk",
  "yahoo.fr",
  "yahoo.de",
  "yahoo.es",
  "yahoo.it",
  "yahoo.co.jp",
  "yahoo.com.br",
  "ymail.com",
  "rocketmail.com",
  "outlook.com",
  "outlook.fr",
  "outlook.de",
  "hotmail.com",
  "hotmail.co.uk",
  "hotmail.fr",
  "hotmail.de",
  "hotmail.it",
  "hotmail.es",
  "live.com",
  "live.co.uk",
  "live.fr",
  "msn.com",
  "icloud.com",
  "me.com",
  "mac.com",
  "aol.com",
  "aim.com",
  "proton.me",
  "protonmail.com",
  "protonmail.ch",
  "pm.me",
  "tutanota.com",
  "tutanota.de",
  "tuta.io",
  "fastmail.com",
  "fastmail.fm",
  "hey.com",
  "zoho.com",
  "zohomail.com",
  "mail.com",
  "email.com",
  "gmx.com",
  "gmx.net",
  "gmx.de",
  "gmx.at",
  "gmx.ch",
  "web.de",
  "t-online.de",
  "freenet.de",
  "posteo.de",
  "mailbox.org",
  "orange.fr",
  "wanadoo.fr",
  "free.fr",
  "sfr.fr",
  "laposte.net",
  "libero.it",
  "virgilio.it",
  "tiscali.it",
  "seznam.cz",
  "wp.pl",
  "o2.pl",
  "interia.pl",
  "onet.pl",
  "yandex.ru",
  "yandex.com",
  "ya.ru",
  "mail.ru",
  "bk.ru",
  "list.ru",
  "inbox.ru",
  "rambler.ru",
  "ukr.net",
  "qq.com",
  "163.com",
  "126.com",
  "sina.com",
  "sohu.com",
  "naver.com",
  "daum.net",
  "hanmail.net",
  "rediffmail.com",
  "bol.com.br",
  "uol.com.br",
  "terra.com.br",
  "btinternet.com",
  "sky.com",
  "comcast.net",
  "verizon.net",
  "att.net",
  "sbcglobal.net",
  "bellsouth.net",
  "cox.net",
  "charter.net",
  "shaw.ca",
  "rogers.com",
  "sympatico.ca",
  "bigpond.com",
  "optusnet.com.au",
  "xtra.co.nz",
]);

/** Mailboxes that belong to a function, not a person. */
const ROLE_LOCAL_PARTS = new Set([
  "admin",
  "billing",
  "contact",
  "enquiries",
  "hello",
  "help",
  "hr",
  "info",
  "inquiries",
  "jobs",
  "marketing",
  "no-reply",
  "noreply",
  "office",
  "press",
  "sales",
  "security",
  "support",
  "team",
  "webmaster",
]);

const Inputs = z.object({ email: text(320) });
type Inputs = z.infer<typeof Inputs>;

/** The address inside `Name <address>`, or the text itself. */
function addressOf(value: string): string {
  return (/<([^<>]+)>/.exec(value)?.[1] ?? value).trim();
}

export function emailDomain(email: string): Record<string, unknown> | null {
  const address = addressOf(email);
  const at = address.lastIndexOf("@");
  if (at <= 0) return null;
  const domain = domainOf(address.slice(at + 1));
  if (!domain) return null;
  const local = address.slice(0, at).toLowerCase().split("+")[0] ?? "";
  const freeMail = FREE_MAIL.has(domain);
  return {
    domain,
    free_mail: freeMail,
    role_account: ROLE_LOCAL_PARTS.has(local),
    website: freeMail ? null : `https://${domain}`,
  };
}

export const emailDomainEnrichment: Enrichment<Inputs> = {
  id: "email_domain",
  name: "E-mail domain",
  description:
    "The domain of an e-mail address, whether it belongs to a free-mail provider, whether the address is a role account (info@, sales@ …), and the company website for a non-free domain. Offline.",
  cost: 0,
  inputs: [{ id: "email", type: "text", required: true, description: "An e-mail address" }],
  schema: Inputs,
  outputs: [
    { id: "domain", type: "text", description: "Lower case, without www." },
    { id: "free_mail", type: "boolean", description: "A consumer mailbox provider's domain" },
    { id: "role_account", type: "boolean", description: "info@, sales@, support@ …" },
    { id: "website", type: "text", description: "https://<domain>, unless free mail" },
  ],
  needsSecrets: false,
  providers: () => [{ id: "builtin", lookup: async (inputs) => emailDomain(inputs.email) }],
};
