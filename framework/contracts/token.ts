/**
 * A typed injection token: a plain symbol (what tsyringe's `@inject` takes) that also carries,
 * for the compiler only, the type of the contract it stands for. A host resolves `token<T>` to a
 * `T` without casts, and a wiring error can name the token by its description.
 */
export type Token<T> = symbol & { readonly __contract?: T };

export function token<T>(name: string): Token<T> {
  return Symbol.for(`baton.${name}`) as Token<T>;
}

export function tokenName(t: symbol): string {
  return t.description ?? t.toString();
}
