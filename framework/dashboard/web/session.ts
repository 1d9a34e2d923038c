// The admin token lives in this tab's sessionStorage only: never in a URL, never in a cookie,
// gone when the tab closes.
const KEY = 'baton.dashboard.token';

export function savedToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function saveToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}
