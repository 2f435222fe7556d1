// Compile-time checks that a declared type is exactly what a zod schema validates, so that a type
// written by hand (which signatures, hovers and compiler errors show by name) cannot drift from its
// schema. Types only: nothing of this module exists at run time.

/**
 * `true` when `A` and `B` are the same type, field for field. Assignability both ways catches a
 * field whose type differs, or `x?: T` against `x?: T | undefined`; the identity test catches an
 * optional field that only one side has, or a `readonly` that only one side has.
 */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? Identical<A, B> : false) : false;

// The compiler's own identity relation, reached through two generic functions that are never called.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- T is what the two signatures compare
type Identical<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Compiles only when `T` is `true`: `Holds<Same<Declared, z.infer<typeof Schema>>>`. */
export type Holds<T extends true> = T;

/**
 * `true` when the options type `A` (declared, with its docs) has exactly the fields of `B` (what a
 * zod schema accepts, `z.input`), each optional on both sides or on neither, and of the same type
 * once `undefined` and `readonly` are set aside (a declared option `x?: T` against a schema's
 * `x?: T | undefined`).
 */
export type SameOptions<A, B> = [keyof A] extends [keyof B]
  ? [keyof B] extends [keyof A]
    ? [OptionalKeys<A>] extends [OptionalKeys<B>]
      ? [OptionalKeys<B>] extends [OptionalKeys<A>]
        ? { [K in keyof A & keyof B]: Mutual<Exclude<A[K], undefined>, Exclude<B[K], undefined>> }[keyof A & keyof B] extends true
          ? true
          : false
        : false
      : false
    : false
  : false;

type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];
type Mutual<A, B> = [Plain<A>] extends [Plain<B>] ? ([Plain<B>] extends [Plain<A>] ? true : false) : false;
// Without `readonly`, at every depth (a declared `readonly string[]` is a schema's `string[]`).
type Plain<T> = T extends (...args: never[]) => unknown ? T : T extends readonly (infer U)[] ? Plain<U>[] : T extends object ? { -readonly [K in keyof T]: Plain<T[K]> } : T;
