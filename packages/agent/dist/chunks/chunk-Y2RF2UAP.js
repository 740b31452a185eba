import { createRequire as __agentauthCreateRequire } from 'node:module';
const require = __agentauthCreateRequire(import.meta.url);
