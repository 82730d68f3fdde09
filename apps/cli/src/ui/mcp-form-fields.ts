/**
 * The fields of an MCP elicitation form as the terminal asks them: what a field is (its type,
 * format, bounds, choices from `enum`/`oneOf`/`anyOf`/legacy `enumNames`), how it is described and
 * defaulted, and what an answer typed for it means (checked, or why not).
 */
/** A field of an elicitation form, as the spec restricts it (primitive types, enums). */
export interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  format?: string;
  default?: unknown;
  enum?: unknown[];
  enumNames?: string[];
  oneOf?: { const?: unknown; title?: string }[];
  anyOf?: { const?: unknown; title?: string }[];
  items?: {
    enum?: unknown[];
    anyOf?: { const?: unknown; title?: string }[];
    oneOf?: { const?: unknown; title?: string }[];
  };
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

export interface Choice {
  value: string;
  title: string;
}

/** The choices of a single- or multi-select field, or `undefined` for a free field. */
export function choicesOf(field: FieldSchema): Choice[] | undefined {
  const source = field.type === 'array' ? field.items : field;
  if (source === undefined) return undefined;
  const titled = source.oneOf ?? source.anyOf;
  if (Array.isArray(titled))
    return titled
      .filter((option) => option.const !== undefined)
      .map((option) => ({
        value: String(option.const),
        title: option.title ?? String(option.const),
      }));
  if (Array.isArray(source.enum)) {
    const names = field.type === 'array' ? undefined : field.enumNames;
    return source.enum.map((value, index) => ({
      value: String(value),
      title: names?.[index] ?? String(value),
    }));
  }
  return undefined;
}

/** What to type, for the field's prompt: `integer 1–100`, `yes/no`, `email`, `one of …`. */
export function describeField(field: FieldSchema, choices: Choice[] | undefined): string {
  if (choices !== undefined) {
    const list = choices
      .map(
        (choice, index) =>
          `${index + 1}) ${choice.title}${choice.title === choice.value ? '' : ` [${choice.value}]`}`,
      )
      .join('  ');
    return field.type === 'array' ? `any of, by number or value, comma-separated: ${list}` : list;
  }
  const range =
    field.minimum !== undefined || field.maximum !== undefined
      ? ` ${field.minimum ?? '…'}–${field.maximum ?? '…'}`
      : '';
  switch (field.type) {
    case 'boolean':
      return 'y/n';
    case 'integer':
      return `integer${range}`;
    case 'number':
      return `number${range}`;
    default:
      return field.format === undefined ? 'text' : field.format;
  }
}

export function defaultText(field: FieldSchema, choices: Choice[] | undefined): string {
  const value = field.default;
  if (value === undefined) return '';
  const title = (item: unknown) =>
    choices?.find((choice) => choice.value === String(item))?.title ?? String(item);
  if (Array.isArray(value)) return value.map(title).join(', ');
  if (typeof value === 'boolean') return value ? 'y' : 'n';
  return title(value);
}

/** The typed text as the field's value, or a reason to ask again. */
export function parseFieldAnswer(
  field: FieldSchema,
  text: string,
): { value: unknown } | { error: string } {
  const choices = choicesOf(field);
  const pick = (item: string): string | undefined => {
    if (choices === undefined) return item;
    const trimmed = item.trim();
    const byNumber = /^\d+$/.test(trimmed) ? choices[Number(trimmed) - 1] : undefined;
    const found =
      byNumber ??
      choices.find(
        (choice) =>
          choice.value === trimmed || choice.title.toLowerCase() === trimmed.toLowerCase(),
      );
    return found?.value;
  };
  if (field.type === 'array') {
    const items = text
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
    const values: string[] = [];
    for (const item of items) {
      const value = pick(item);
      if (value === undefined) return { error: `"${item}" is not one of the choices` };
      if (!values.includes(value)) values.push(value);
    }
    if (field.minItems !== undefined && values.length < field.minItems)
      return { error: `choose at least ${field.minItems}` };
    if (field.maxItems !== undefined && values.length > field.maxItems)
      return { error: `choose at most ${field.maxItems}` };
    return { value: values };
  }
  if (choices !== undefined) {
    const value = pick(text);
    return value === undefined
      ? { error: 'type one of the numbers or values shown' }
      : { value: field.type === 'number' || field.type === 'integer' ? Number(value) : value };
  }
  switch (field.type) {
    case 'boolean': {
      const answer = text.trim().toLowerCase();
      if (['y', 'yes', 'true'].includes(answer)) return { value: true };
      if (['n', 'no', 'false'].includes(answer)) return { value: false };
      return { error: 'type y or n' };
    }
    case 'integer':
    case 'number': {
      const value = Number(text.trim());
      if (text.trim() === '' || !Number.isFinite(value)) return { error: 'type a number' };
      if (field.type === 'integer' && !Number.isInteger(value))
        return { error: 'type a whole number' };
      if (field.minimum !== undefined && value < field.minimum)
        return { error: `at least ${field.minimum}` };
      if (field.maximum !== undefined && value > field.maximum)
        return { error: `at most ${field.maximum}` };
      return { value };
    }
    default: {
      if (field.minLength !== undefined && text.length < field.minLength)
        return { error: `at least ${field.minLength} characters` };
      if (field.maxLength !== undefined && text.length > field.maxLength)
        return { error: `at most ${field.maxLength} characters` };
      if (field.format === 'email' && !/^[^@\s]+@[^@\s]+$/.test(text))
        return { error: 'type an email address' };
      if (field.format === 'uri' && !URL.canParse(text)) return { error: 'type a URI' };
      if (field.format === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(text))
        return { error: 'type a date as YYYY-MM-DD' };
      if (field.format === 'date-time' && Number.isNaN(Date.parse(text)))
        return { error: 'type a date and time (ISO 8601)' };
      return { value: text };
    }
  }
}
