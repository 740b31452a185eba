/**
 * What a rule says about an input it refuses (docs/layout.md "src/domain/rules/"). A rule
 * function returns every Problem it finds, in the order an entry point checks them; an empty
 * list means the input is valid. Each entry point (the CLI and registerClient, the console's
 * forms, dynamic registration, metadata documents) throws its first problem in its own error
 * shape, with its own wording where that differs: `rule` names which rule was broken, so an
 * entry point can word it without matching on `message`.
 */
export interface Problem<Rule extends string = string> {
  /** The field, by its wire name (client_name, redirect_uris, resource, owner_email, …). */
  field: string;
  /** Which rule of the field was broken (too_long, invalid, …): what an entry point words its message by. */
  rule: Rule;
  /**
   * What is wrong, worded to follow the field (and its index): `${field} ${message}` (or
   * `${field}[${index}] ${message}`) reads as a sentence.
   */
  message: string;
  /** For a field that is a list: the position of the entry that is wrong. */
  index?: number;
}
