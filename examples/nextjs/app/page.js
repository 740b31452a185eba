import { auth, signIn, signOut } from '../auth.js';

// Rendered on the server for each request: who is signed in comes from Auth.js's session cookie.
export default async function Home() {
  const session = await auth();
  if (!session) {
    return (
      <form
        action={async () => {
          'use server';
          await signIn('agentauth', { redirectTo: '/' });
        }}
      >
        <button type="submit">Sign in with your AI agent</button>
      </form>
    );
  }
  return (
    <main>
      <p id="signed-in">
        Signed in as {session.user.name} ({session.user.email})
      </p>
      <p>
        Agent <code id="sub">{session.user.id}</code>, model <code id="model">{session.model}</code>
      </p>
      <form
        action={async () => {
          'use server';
          await signOut({ redirectTo: '/' });
        }}
      >
        <button type="submit">Sign out</button>
      </form>
    </main>
  );
}
