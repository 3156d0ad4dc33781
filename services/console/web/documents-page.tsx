// "Documentos": search a municipality's notes (chave, emission dates, prestador/tomador, situação), and a
// note's page with its fields, its events and its XML.
import { useEffect, useState } from "preact/hooks";
import type { DocumentDetail, DocumentStatusName, DocumentSummary } from "../api-types.js";
import { DOCUMENT_STATUS_LABELS, formatCents, formatDateTime, formatTaxId } from "../labels-nfse.js";
import { api, ApiFailure } from "./api.js";
import { MunicipioPicker, useMunicipios } from "./municipio-picker.js";
import { navigate, onLinkClick } from "./router.js";

interface Search {
  ibge: string;
  chave: string;
  from: string;
  to: string;
  prestador: string;
  tomador: string;
  status: DocumentStatusName | "";
}

const EMPTY: Search = { ibge: "", chave: "", from: "", to: "", prestador: "", tomador: "", status: "" };
const documentPath = (ibge: string, chave: string) => `/documentos/${ibge}/${chave}`;

export function DocumentsPage({ onSignedOut }: { onSignedOut: () => void }) {
  const municipios = useMunicipios();
  const [search, setSearch] = useState<Search>(EMPTY);
  const [results, setResults] = useState<DocumentSummary[] | undefined>();
  const [pages, setPages] = useState<string[]>([]);
  const [next, setNext] = useState<string | undefined>();
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const set = (k: keyof Search) => (e: { currentTarget: { value: string } }) => setSearch({ ...search, [k]: e.currentTarget.value });

  const run = async (pageToken: string, history: string[]) => {
    if (!search.ibge) return setError("Escolha o município.");
    setBusy(true);
    setError("");
    try {
      const { ibge, ...filter } = search;
      const res = await api.documents(ibge, { ...filter, pageToken });
      setResults(res.documents);
      setNext(res.nextPageToken);
      setPages(history);
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 401) return onSignedOut();
      setError(`A busca falhou: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="docs-title">
      <h2 id="docs-title">Documentos</h2>
      <form
        class="filters wrap"
        aria-label="Busca de notas"
        onSubmit={(e) => {
          e.preventDefault();
          void run("", [""]);
        }}
      >
        <MunicipioPicker value={search.ibge} onChange={(ibge) => setSearch({ ...search, ibge })} municipios={municipios} />
        <label>
          Chave de acesso
          <input value={search.chave} onInput={set("chave")} inputMode="numeric" maxLength={60} size={52} />
        </label>
        <label>
          Emitida de
          <input type="date" value={search.from} onInput={set("from")} />
        </label>
        <label>
          até
          <input type="date" value={search.to} onInput={set("to")} />
        </label>
        <label>
          Prestador (CNPJ/CPF)
          <input value={search.prestador} onInput={set("prestador")} maxLength={20} />
        </label>
        <label>
          Tomador (CNPJ/CPF)
          <input value={search.tomador} onInput={set("tomador")} maxLength={20} />
        </label>
        <label>
          Situação
          <select value={search.status} onChange={set("status")}>
            <option value="">todas</option>
            {(Object.keys(DOCUMENT_STATUS_LABELS) as DocumentStatusName[])
              .filter((s) => s !== "desconhecida")
              .map((s) => (
                <option value={s}>{DOCUMENT_STATUS_LABELS[s]}</option>
              ))}
          </select>
        </label>
        <button type="submit" disabled={busy}>
          Buscar
        </button>
      </form>
      <p role="alert" class="error">
        {error}
      </p>
      {results && (
        <>
          <div class="table-wrap">
            <table class="feeds" data-testid="documents">
              <caption>
                {results.length} {results.length === 1 ? "nota" : "notas"}
                {pages.length > 1 ? ` · página ${pages.length}` : ""}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Número</th>
                  <th scope="col">Chave</th>
                  <th scope="col">Emissão</th>
                  <th scope="col">Prestador</th>
                  <th scope="col">Tomador</th>
                  <th scope="col">Valor</th>
                  <th scope="col">Situação</th>
                </tr>
              </thead>
              <tbody>
                {results.map((d) => (
                  <tr key={d.chave} data-chave={d.chave}>
                    <td>{d.numero}</td>
                    <td>
                      <a href={documentPath(search.ibge, d.chave)} onClick={onLinkClick}>
                        {d.chave}
                      </a>
                    </td>
                    <td>{formatDateTime(d.dhEmi)}</td>
                    <td>
                      {d.prestador.name} {formatTaxId(d.prestador.document)}
                    </td>
                    <td>
                      {d.tomador.name} {formatTaxId(d.tomador.document)}
                    </td>
                    <td class="num">{formatCents(d.valorCents)}</td>
                    <td>{DOCUMENT_STATUS_LABELS[d.status]}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {(pages.length > 1 || next) && (
            <nav class="pager" aria-label="Páginas da busca">
              <button type="button" disabled={pages.length < 2} onClick={() => void run(pages[pages.length - 2]!, pages.slice(0, -1))}>
                Página anterior
              </button>
              <button type="button" disabled={!next} onClick={() => next && void run(next, [...pages, next])}>
                Próxima página
              </button>
            </nav>
          )}
        </>
      )}
    </section>
  );
}

export function DocumentPage({ ibge, chave, onSignedOut }: { ibge: string; chave: string; onSignedOut: () => void }) {
  const [doc, setDoc] = useState<DocumentDetail | undefined>();
  const [error, setError] = useState("");
  useEffect(() => {
    api.document(ibge, chave).then(setDoc, (err: unknown) => {
      if (err instanceof ApiFailure && err.status === 401) return onSignedOut();
      setError(`Nota não encontrada: ${(err as Error).message}`);
    });
  }, [ibge, chave]);
  const when = formatDateTime;
  return (
    <section aria-labelledby="doc-title">
      <p>
        <a
          href="/documentos"
          onClick={(e) => {
            e.preventDefault();
            history.length > 1 ? history.back() : navigate("/documentos");
          }}
        >
          ← Documentos
        </a>
      </p>
      <div class="toolbar">
        <h2 id="doc-title">NFS-e {doc?.numero ?? ""}</h2>
        {doc && (
          <a class="button" href={api.documentXmlUrl(ibge, chave)} download>
            Baixar XML
          </a>
        )}
      </div>
      <p role="alert" class="error">
        {error}
      </p>
      {doc && (
        <>
          <dl class="facts" data-testid="document-facts">
            <dt>Chave</dt>
            <dd>{doc.chave}</dd>
            <dt>Situação</dt>
            <dd>{DOCUMENT_STATUS_LABELS[doc.status]}</dd>
            <dt>Emissão</dt>
            <dd>{when(doc.dhEmi)}</dd>
            <dt>Competência</dt>
            <dd>{doc.competencia ?? "—"}</dd>
            <dt>Processada em</dt>
            <dd>{when(doc.dhProc)}</dd>
            <dt>Emitente</dt>
            <dd>
              {doc.emitente.name} {formatTaxId(doc.emitente.document)}
            </dd>
            <dt>Prestador</dt>
            <dd>
              {doc.prestador.name} {formatTaxId(doc.prestador.document)}
            </dd>
            <dt>Tomador</dt>
            <dd>
              {doc.tomador.name || "—"} {formatTaxId(doc.tomador.document)}
            </dd>
            <dt>Serviço</dt>
            <dd>
              {doc.servico.codigo} {doc.servico.descricao}
            </dd>
            <dt>Local da prestação</dt>
            <dd>{doc.localPrestacao || "—"}</dd>
            <dt>Município de incidência</dt>
            <dd>{doc.municipioIncidencia || "—"}</dd>
            <dt>Valor</dt>
            <dd>{formatCents(doc.valorCents)}</dd>
            <dt>ISSQN</dt>
            <dd>{formatCents(doc.issqnCents)}</dd>
            {doc.chaveSubstituta && (
              <>
                <dt>Substituída por</dt>
                <dd>{doc.chaveSubstituta}</dd>
              </>
            )}
            {doc.chaveSubstituida && (
              <>
                <dt>Substitui</dt>
                <dd>{doc.chaveSubstituida}</dd>
              </>
            )}
            <dt>NSU</dt>
            <dd>{doc.nsu}</dd>
            <dt>Versão do leiaute</dt>
            <dd>{doc.versao}</dd>
            <dt>SHA-256 do XML</dt>
            <dd class="mono">{doc.xmlSha256}</dd>
          </dl>
          <h3 id="events-title">Eventos</h3>
          {doc.events.length === 0 ? (
            <p class="muted">Nenhum evento registrado para esta nota.</p>
          ) : (
            <table class="feeds" aria-labelledby="events-title" data-testid="events">
              <thead>
                <tr>
                  <th scope="col">Código</th>
                  <th scope="col">Tipo</th>
                  <th scope="col">Seq.</th>
                  <th scope="col">Data do evento</th>
                  <th scope="col">Registrado em</th>
                  <th scope="col">Autor</th>
                  <th scope="col">Motivo</th>
                  <th scope="col">XML</th>
                </tr>
              </thead>
              <tbody>
                {doc.events.map((e) => (
                  <tr key={e.id} data-codigo={e.codigo}>
                    <td>{e.codigo}</td>
                    <td>{e.tipo.toLowerCase().replaceAll("_", " ")}</td>
                    <td class="num">{e.nSeq}</td>
                    <td>{when(e.dhEvento)}</td>
                    <td>{when(e.dhProc)}</td>
                    <td>{formatTaxId(e.autor)}</td>
                    <td class="wrap">{e.motivo}</td>
                    <td>
                      <a href={api.eventXmlUrl(ibge, chave, e.id)} download aria-label={`Baixar o XML do evento ${e.codigo}`}>
                        Baixar
                      </a>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
