/**
 * phone_normalize: a phone number in E.164 with its country and line type, by
 * libphonenumber's full metadata. Offline and free. A number libphonenumber does not
 * consider valid is "nothing found": a half-right E.164 would be worse than none.
 */
import { isSupportedCountry, parsePhoneNumberFromString } from "libphonenumber-js/max";
import { z } from "zod";
import { text } from "./fields";
import type { Enrichment } from "./types";

const Inputs = z.object({ phone: text(100), country: text(100).optional() });
type Inputs = z.infer<typeof Inputs>;

export function normalizePhone(phone: string, country?: string): Record<string, unknown> | null {
  // A country the library does not know (a name, not a code) is no hint rather than an error.
  const region = country?.toUpperCase();
  const hint = region && isSupportedCountry(region) ? region : undefined;
  const parsed = parsePhoneNumberFromString(phone, hint ? { defaultCountry: hint } : undefined);
  if (!parsed?.isValid()) return null;
  const type = parsed.getType();
  return {
    e164: parsed.number,
    country: parsed.country ?? null,
    line_type: type ? type.toLowerCase() : null,
    national: parsed.formatNational(),
    international: parsed.formatInternational(),
  };
}

export const phoneNormalizeEnrichment: Enrichment<Inputs> = {
  id: "phone_normalize",
  name: "Phone number",
  description:
    "Normalizes a phone number to E.164 and tells its country and line type (mobile, fixed_line, voip, toll_free …). A number without a + prefix needs the country input. Offline.",
  cost: 0,
  inputs: [
    { id: "phone", type: "text", required: true, description: "A phone number as written" },
    {
      id: "country",
      type: "text",
      required: false,
      description: "ISO 3166 alpha-2 code for numbers without a + prefix, e.g. GB",
    },
  ],
  schema: Inputs,
  outputs: [
    { id: "e164", type: "text", description: "E.164, e.g. +442079460018" },
    { id: "country", type: "text", description: "ISO 3166 alpha-2 code" },
    {
      id: "line_type",
      type: "text",
      description:
        "mobile, fixed_line, fixed_line_or_mobile, voip, toll_free, premium_rate, shared_cost, personal_number, pager, uan, voicemail",
    },
    { id: "national", type: "text", description: "National format" },
    { id: "international", type: "text", description: "International format" },
  ],
  needsSecrets: false,
  providers: () => [
    { id: "builtin", lookup: async (inputs) => normalizePhone(inputs.phone, inputs.country) },
  ],
};
