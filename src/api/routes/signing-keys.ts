/** /signing-keys: the key pairs that sign tokens with TOKEN_SIGNING_ALG (docs/design.md §19), an admin's. */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { listSigningKeys, rotateSigningKey } from '../../management/signing-keys.ts';
import { SigningKeyView } from '../../management/views.ts';
import { type ApiScope, callerOf } from './caller.ts';
import { answers } from './shared.ts';

const KeyList = Type.Object({ data: Type.Array(Type.Ref(SigningKeyView)) }, { title: 'SigningKeyList' });
const tags = ['Signing keys'];

const RotateBody = Type.Object(
  {
    now: Type.Optional(
      Type.Boolean({
        description: 'A new key pair signs at once, however young the next key is: for a key that leaked.',
      }),
    ),
    revoke_previous: Type.Optional(
      Type.Boolean({
        description:
          'With `now`: every earlier key leaves the key set at once; the tokens it signed stop verifying everywhere.',
      }),
    ),
  },
  { additionalProperties: false, title: 'SigningKeyRotation' },
);

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

  /** The document's requestBody.required: false (routes/index.ts), which FastifySchema has no field for. */
  const BODY_OPTIONAL: Record<string, unknown> = { 'x-body-optional': true };
  api.post<{ Body: Static<typeof RotateBody> | undefined }>(
    '/signing-keys/rotate',
    {
      schema: {
        operationId: 'rotateSigningKey',
        summary: 'Rotate the signing key',
        description:
          'The next key signs from now, the current one retires, a new next key is published; every node signs with the new key within 30 seconds. 409 `conflict` when no key signs (`HS256`) or while the next key has been published for less than one JWKS cache period and a reload (3630 s). With `now: true` (a key leaked), a new key pair signs at once whatever the next key’s age, recorded as `signing_key.rotate_now`: verifiers with a cached key set fetch it again on the new `kid`. With `revoke_previous: true` too, every earlier key leaves the key set at once, and the tokens it signed stop verifying (introspection and userinfo included) on every node within 30 seconds. Answers the set after the rotation.',
        tags,
        body: Type.Optional(RotateBody),
        ...BODY_OPTIONAL,
        response: answers({ 200: KeyList }, 400, 403, 409),
      },
      // The body is optional (a plain rotation sends none, as before `now` existed); the schema
      // checks a body that is sent.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      const { now, revoke_previous: revokePrevious } = request.body ?? {};
      return { data: await rotateSigningKey(ctx, callerOf(request), { now, revokePrevious }) };
    },
  );
}
