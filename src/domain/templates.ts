/** `{{ expression }}` templates inside string fields. */
const TEMPLATE = /\{\{([\s\S]*?)\}\}/g;

export interface TemplatePart {
  literal: string;
  expression?: string;
}

/** Splits a template into literal text and the expressions between `{{` and `}}`. */
export function parseTemplate(text: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const m of text.matchAll(TEMPLATE)) {
    const index = m.index ?? 0;
    parts.push({ literal: text.slice(last, index), expression: (m[1] ?? "").trim() });
    last = index + m[0].length;
  }
  parts.push({ literal: text.slice(last) });
  return parts;
}

export function templateExpressions(text: string): string[] {
  return parseTemplate(text).flatMap((p) => (p.expression === undefined ? [] : [p.expression]));
}
