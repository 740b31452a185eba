/**
 * An action in words (docs/design.md §21): what a website asks an agent's owner to approve, as
 * the console, the mail, the webhooks and the agent read it. "Acme Notes asks whether Research
 * assistant may: Pay 20 EUR to Acme". Plain text: every HTML caller escapes it.
 */
import { type ActionType, type AuthorizationDetail, describeAuthorizationDetail } from './authorization-details.ts';

/**
 * Each detail of an action in words, by the website's action types.
 *
 * @example
 * actionWords([{ type: 'payment', amount: 20, currency: 'EUR', payee: 'Acme' }], [payment]); // ['Pay 20 EUR to Acme']
 */
export function actionWords(details: readonly AuthorizationDetail[] | null, types: ActionType[]): string[] {
  return (details ?? []).map((detail) => describeAuthorizationDetail(detail, types));
}

/**
 * The whole action in one line: its details' words (actionWords), joined by "; ".
 *
 * @example
 * actionSummary(actionWords(details, types)); // 'Pay 20 EUR to Acme; Delete the note Diary'
 */
export function actionSummary(words: readonly string[]): string {
  return words.join('; ');
}

/**
 * The owner's question: which website asks, about which agent, to do what.
 *
 * @example
 * actionQuestion('Acme Notes', 'Research assistant', 'Pay 20 EUR to Acme');
 * // 'Acme Notes asks whether Research assistant may: Pay 20 EUR to Acme'
 */
export function actionQuestion(website: string, agent: string, summary: string): string {
  return `${website} asks whether ${agent} may: ${summary}`;
}
