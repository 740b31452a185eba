/** /signing-keys: the key pairs that sign tokens with TOKEN_SIGNING_ALG (docs/design.md §19), an admin's. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { listSigningKeys, rotateSigningKey } from '../../management/signing-keys.ts';
import { SigningKeyView } from '../../management/views.ts';
import { type ApiScope, callerOf } from './caller.ts';
import { answers } from './shared.ts';

const KeyList = Type.Object({ data: Type.Array(Type.Ref(SigningKeyView)) }, { title: 'SigningKeyList' });
const tags = ['Signing keys'];

export async function signingKeyRoutes(api: FastifyInstance, { ctx }: ApiScope): Promise<void> {
  api.get(
    '/signing-keys',
    {
      schema: {
        operationId: 'listSigningKeys',
        summary: 'List signing keys',
        description:
          'Every key of the shared set, oldest first: `next` (published, signs from the next rotation), `current` (signs), `retired` (published until its last token expires). Empty with `TOKEN_SIGNING_ALG=HS256`. Never a private key. Needs an admin’s key that reaches all accounts.',
        tags,
        response: answers({ 200: KeyList }, 403),
      },
    },
    async (request) => ({ data: await listSigningKeys(ctx, callerOf(request)) }),
  );

  api.post(
    '/signing-keys/rotate',
    {
      schema: {
        operationId: 'rotateSigningKey',
        summary: 'Rotate the signing key',
        description:
          'The next key signs from now, the current one retires, a new next key is published; every node signs with the new key within 30 seconds. 409 `conflict` when no key signs (`HS256`) or while the next key has been published for less than one JWKS cache period and a reload (3630 s). Answers the set after the rotation.',
        tags,
        response: answers({ 200: KeyList }, 403, 409),
      },
    },
    async (request) => ({ data: await rotateSigningKey(ctx, callerOf(request)) }),
  );
}
