// Auth.js's routes under /api/auth: sign-in, the callback from agentauth, the session, sign-out.
import { handlers } from '../../../../auth.js';

export const { GET, POST } = handlers;
