import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

const INTEGER_TEXT = /^-?[0-9]+$/;
const NUMBER_TEXT = /^-?[0-9]+(\.[0-9]+)?$/;

/**
 * Query strings and path parameters arrive as text. TypeBox's own conversion is lenient
 * ("1.5" becomes 1, "true" becomes 1, "0x10" becomes 16); here only plain decimal text becomes a
 * number and only "true"/"false" a boolean, so anything else fails validation with a clear error.
 */
function convertText(schema: TSchema, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const type = (schema as { type?: unknown }).type;
  if (type === 'integer' && INTEGER_TEXT.test(value)) return Number(value);
  if (type === 'number' && NUMBER_TEXT.test(value)) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

function convertObject(schema: TSchema, value: unknown): unknown {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties;
  if (!properties || value === null || typeof value !== 'object') return value;
  const converted: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [name, property] of Object.entries(properties)) {
    if (name in converted) converted[name] = convertText(property, converted[name]);
  }
  return converted;
}

/** Fastify validator: TypeBox's compiled checks, with strict text conversion outside the body. */
export const strictValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  return (value) => {
    const converted = httpPart === 'body' ? value : convertObject(schema, value);
    if (check.Check(converted)) return { value: converted };
    return { error: check.Errors(converted) as never };
  };
};
