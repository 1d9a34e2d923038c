import { render } from 'preact';
import { useCallback, useState } from 'preact/hooks';
import type { ClusterStatus } from '../../cluster/schemas.js';
import { ApiError, describeError } from './api.js';
import { AuthorityView } from './authority-view.js';
import { fetchPicture } from './cluster.js';
import { ConfirmDialog, type ConfirmRequest } from './confirm.js';
import { MembersTable } from './members.js';
import { DurationPlot } from './plot.js';
import { RecentTransfersList, useSettledTransfers } from './recent-transfers.js';
import { usePolling } from './poll.js';
import { forgetToken, savedToken, saveToken } from './session.js';
import { StreamView } from './stream-view.js';
import { plural } from './words.js';

function App() {
  const [token, setToken] = useState<string | null>(savedToken());
  const [refusal, setRefusal] = useState<string>();
  const logOut = (why?: string) => {
    forgetToken();
    setToken(null);
    setRefusal(why);
  };
  if (!token) {
    return (
      <Login
        refusal={refusal}
        onToken={async (candidate) => {
          // The token is checked before it is kept: a wrong one is said so, here.
          try {
            await fetchPicture(candidate);
          } catch (e) {
            setRefusal(e instanceof ApiError && e.unauthorized ? `The node refused this token: ${e.message}` : `The node did not answer: ${describeError(e)}`);
            return;
          }
          saveToken(candidate);
          setRefusal(undefined);
          setToken(candidate);
        }}
      />
    );
  }
  return <Dashboard token={token} onLogOut={logOut} />;
}

function Login({ refusal, onToken }: { refusal?: string; onToken: (token: string) => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  return (
    <main class="login">
      <h1>Baton</h1>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const input = (e.currentTarget as HTMLFormElement).elements.namedItem('token') as HTMLInputElement;
          setBusy(true);
          await onToken(input.value.trim());
          setBusy(false);
        }}
      >
        <label for="token">Admin token</label>
        <p class="subtle" id="token-help">
          A token with the admin read scope; <code>baton up</code> prints it. It stays in this tab only.
        </p>
        <input id="token" name="token" type="password" required autocomplete="off" aria-describedby="token-help" autofocus />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Checking…' : 'Open the dashboard'}
        </button>
        {refusal && (
          <p class="error" role="alert" data-testid="login-error">
            {refusal}
          </p>
        )}
      </form>
    </main>
  );
}

function Dashboard({ token, onLogOut }: { token: string; onLogOut: (why?: string) => void }) {
  const [confirm, setConfirm] = useState<ConfirmRequest>();
  const picture = usePolling(
    async () => {
      try {
        return await fetchPicture(token);
      } catch (e) {
        if (e instanceof ApiError && e.unauthorized) onLogOut(`The node no longer accepts this token: ${e.message}`);
        throw e;
      }
    },
    1_000,
    [token],
  );
  const close = useCallback(() => setConfirm(undefined), []);
  const p: ClusterStatus | undefined = picture.data;
  return (
    <>
      <header class="top">
        <h1>
          Baton <span class="subtle">{p ? `${p.variant} cluster, seen from ${p.servedBy}` : 'connecting…'}</span>
        </h1>
        <button type="button" onClick={() => onLogOut()}>
          Log out
        </button>
      </header>
      <main>
        {picture.error && (
          <p class="error" role="alert">
            The cluster picture could not be read: {picture.error}
          </p>
        )}
        {p && <Picture picture={p} token={token} ask={setConfirm} />}
      </main>
      {confirm && <ConfirmDialog request={confirm} onClose={close} />}
    </>
  );
}

function Picture({ picture: p, token, ask }: { picture: ClusterStatus; token: string; ask: (request: ConfirmRequest) => void }) {
  const now = Date.now(); // clock-ok: the page runs in the browser, outside any simulated clock
  const settled = useSettledTransfers(p, now);
  return (
    <>
      <MembersTable picture={p} now={now} />
      <p class="counts" data-testid="counts">
        {Object.entries(p.counts)
          .map(([name, n]) => plural(n, name))
          .join(', ')}
        ; {plural(p.transfersInFlight.count, 'transfers')} in flight
      </p>
      <DurationPlot points={settled} now={now} />
      <RecentTransfersList transfers={settled} />
      {p.variant === 'stream' ? <StreamView token={token} picture={p} ask={ask} /> : <AuthorityView token={token} picture={p} ask={ask} />}
    </>
  );
}

const root = document.getElementById('app')!;
// The "loading" line was for the time before this script ran.
root.textContent = '';
render(<App />, root);
