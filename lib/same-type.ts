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
