import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { Me } from "../api-types.js";
import { ROLE_LABELS } from "../labels.js";
import { api, ApiFailure } from "./api.js";
import { billingPage } from "./billing-pages.js";
import { SignIn } from "./sign-in.js";
import { SyncPage } from "./sync-page.js";
import "./styles.css";

function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  useEffect(() => {
    api.me().then(setMe, (err: unknown) => setMe(err instanceof ApiFailure && err.status === 401 ? null : null));
  }, []);
  if (me === undefined) return <p class="loading">Carregando…</p>;
  if (me === null) return <SignIn onSignedIn={setMe} />;
  const billing = billingPage(location.pathname, me, () => setMe(null));
  return (
    <>
      <header class="top">
        <h1>Malha · Painel</h1>
        <nav aria-label="Páginas">
          <a href="/" {...(billing ? {} : { "aria-current": "page" })}>
            Sincronização
          </a>
          <a href="/cobranca" {...(billing ? { "aria-current": "page" } : {})}>
            Cobrança
          </a>
        </nav>
        <span class="who" data-testid="who">
          {me.user} ({ROLE_LABELS[me.role]})
        </span>
        <button type="button" class="link" onClick={() => void api.signOut().then(() => setMe(null))}>
          Sair
        </button>
      </header>
      <main>{billing ?? <SyncPage me={me} onSignedOut={() => setMe(null)} />}</main>
    </>
  );
}

render(<App />, document.getElementById("app")!);
