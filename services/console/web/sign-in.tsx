import { useState } from "preact/hooks";
import type { Me } from "../api-types.js";
import { api, ApiFailure } from "./api.js";

export function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [user, setUser] = useState("");
  const [token, setToken] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      onSignedIn(await api.signIn(user.trim(), token));
    } catch (err) {
      setError(
        err instanceof ApiFailure && err.status === 401
          ? "Usuário ou token incorretos."
          : `Não foi possível entrar: ${(err as Error).message}`,
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>Malha · Painel</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label>
          Usuário
          <input name="user" autoComplete="username" required value={user} onInput={(e) => setUser(e.currentTarget.value)} />
        </label>
        <label>
          Token
          <input
            name="token"
            type="password"
            autoComplete="current-password"
            required
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          Entrar
        </button>
        <p role="alert" class="error">
          {error}
        </p>
      </form>
    </main>
  );
}
