import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { AmbienteName, Me, TipoNsuName } from "../api-types.js";
import { ROLE_LABELS } from "../labels.js";
import { api, ApiFailure } from "./api.js";
import { billingPage } from "./billing-pages.js";
import { CertificatesPage } from "./certificates-page.js";
import { DocumentPage, DocumentsPage } from "./documents-page.js";
import { FeedPage } from "./feed-page.js";
import { onLinkClick, useLocation } from "./router.js";
import { SignIn } from "./sign-in.js";
import { SyncPage } from "./sync-page.js";
import "./styles.css";

/** The navigation; the last entry whose prefix matches the path is the current one (feed pages are under "/"). */
const NAV = [
  { href: "/", label: "Sincronização" },
  { href: "/documentos", label: "Documentos" },
  { href: "/certificados", label: "Certificados" },
  { href: "/cobranca", label: "Cobrança" },
] as const;

function Page({ me, path, onSignedOut }: { me: Me; path: string; onSignedOut: () => void }) {
  const billing = billingPage(path, me, onSignedOut);
  if (billing) return billing;
  const feed = /^\/feeds\/([0-9]{7})\/(producao|producao_restrita)\/(distribuicao|recepcao|geral|mei)$/.exec(path);
  if (feed) {
    return (
      <FeedPage me={me} ibge={feed[1]!} ambiente={feed[2] as AmbienteName} tipoNsu={feed[3] as TipoNsuName} onSignedOut={onSignedOut} />
    );
  }
  const doc = /^\/documentos\/([0-9]{7})\/([0-9]{50})$/.exec(path);
  if (doc) return <DocumentPage ibge={doc[1]!} chave={doc[2]!} onSignedOut={onSignedOut} />;
  if (path === "/documentos") return <DocumentsPage onSignedOut={onSignedOut} />;
  if (path === "/certificados") return <CertificatesPage me={me} onSignedOut={onSignedOut} />;
  return <SyncPage me={me} onSignedOut={onSignedOut} />;
}

function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const { path } = useLocation();
  useEffect(() => {
    api.me().then(setMe, (err: unknown) => setMe(err instanceof ApiFailure && err.status === 401 ? null : null));
  }, []);
  if (me === undefined) return <p class="loading">Carregando…</p>;
  if (me === null) return <SignIn onSignedIn={setMe} />;
  const current = NAV.filter((p) => p.href === "/" || path.startsWith(p.href)).at(-1)!.href;
  return (
    <>
      <header class="top">
        <h1>Malha · Painel</h1>
        <nav aria-label="Páginas">
          {NAV.map((p) => (
            <a href={p.href} onClick={onLinkClick} {...(p.href === current ? { "aria-current": "page" } : {})}>
              {p.label}
            </a>
          ))}
        </nav>
        <span class="who" data-testid="who">
          {me.user} ({ROLE_LABELS[me.role]})
        </span>
        <button type="button" class="link" onClick={() => void api.signOut().then(() => setMe(null))}>
          Sair
        </button>
      </header>
      <main>
        <Page me={me} path={path} onSignedOut={() => setMe(null)} />
      </main>
    </>
  );
}

render(<App />, document.getElementById("app")!);
