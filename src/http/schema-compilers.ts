import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/**
 * Compiles on the first call of what it compiles, or at once when `eager`. Compiling every route's
 * request checks and response serializers at start took some 0.45 s of a 2.5 s restart, for
 * routes a process may never serve; a route's first request pays its own few milliseconds.
 * A test builds the app eagerly, so a schema that will not compile still fails before it ships.
 */
export function compileOnFirstUse<T, R>(compile: () => (value: T) => R, eager: boolean): (value: T) => R {
  if (eager) return compile();
  let compiled: ((value: T) => R) | undefined;
  return (value) => (compiled ??= compile())(value);
}

/** Fastify's own response serializers (fast-json-stringify), each compiled on first use. */
export function buildResponseSerializers(eager: boolean): SerializerFactory {
  const buildDefault = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = buildDefault(externalSchemas, options);
    return (route) => compileOnFirstUse(() => compile(route), eager);
  };
}
