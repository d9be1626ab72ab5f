import type { ReactNode } from 'react';

/** The plain frame of the pages before sign-in. */
export function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth" id="main">
      <p className="brand">Pigeon</p>
      <div className="card">
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

/** A fragment parameter (`#token=…`): tokens from mail never reach a server log or a Referer. */
export function fragmentParam(name: string): string {
  return new URLSearchParams(window.location.hash.slice(1)).get(name) ?? '';
}

/** Where to go after signing in: a path of the console only (never another site). */
export function safeNext(next: string | null): string {
  return next?.startsWith('/') && !next.startsWith('//') ? next : '/';
}
