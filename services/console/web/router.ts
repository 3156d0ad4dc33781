// Client-side routes without a library: the path is the state, links push history entries, Back works.
// The server answers every extension-less path with index.html, so a reload lands on the same page.
import { useEffect, useState } from "preact/hooks";

const EVENT = "malha:navigate";

export function navigate(path: string): void {
  if (path === location.pathname + location.search) return;
  history.pushState(null, "", path);
  window.dispatchEvent(new Event(EVENT));
}

/** The current path and query, re-rendering on navigation and on Back/Forward. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const read = () => ({ path: location.pathname, query: new URLSearchParams(location.search) });
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const update = () => setLoc(read());
    window.addEventListener("popstate", update);
    window.addEventListener(EVENT, update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener(EVENT, update);
    };
  }, []);
  return loc;
}

/** A plain link that navigates in place; modified clicks (new tab, download) keep the browser's behaviour. */
export function onLinkClick(e: MouseEvent): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.currentTarget as HTMLAnchorElement | null) ?? undefined;
  if (!a || a.target || a.hasAttribute("download")) return;
  e.preventDefault();
  navigate(a.pathname + a.search);
}
