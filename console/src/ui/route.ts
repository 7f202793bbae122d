import { useEffect, useState } from 'preact/hooks';

/**
 * Hash routes (`#/dpo`, `#/dpo/requests/{id}`): the server serves one page, and a route holds only console names
 * and record ids — never personal data.
 */
export function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export function go(...parts: string[]): void {
  location.hash = `#/${parts.map(encodeURIComponent).join('/')}`;
}
