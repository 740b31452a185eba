/**
 * The project's root directory. This module lies one level below it both as source (src/)
 * and inside the bundle bin/agentauth builds (dist/), so the same expression holds for both.
 */
export const PROJECT_ROOT = new URL('..', import.meta.url);
