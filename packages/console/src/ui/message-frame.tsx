import { useState } from 'react';

/** Customer HTML may only load images from itself until the viewer asks (tracking pixels, remote content). */
const noRemote = (own = '') =>
  `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data: cid:${own}; style-src 'unsafe-inline'; font-src data:">`;
const REMOTE_IMAGES = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data: cid: https: http:; style-src 'unsafe-inline'; font-src data: https:">`;

/**
 * A customer's HTML, never in the console's DOM: a sandboxed frame (`sandbox` without
 * `allow-scripts` or `allow-same-origin`: no script runs, and the frame is an opaque origin that
 * cannot reach the console's cookies or API) whose own policy allows no remote load until asked.
 * `ownImages`: images from Pigeon itself (the writer's uploads) load at once.
 */
export function MessageFrame({ html, title, ownImages = false }: { html: string; title: string; ownImages?: boolean }) {
  const [remote, setRemote] = useState(false);
  return (
    <div className="message-frame">
      <label className="inline">
        <input type="checkbox" checked={remote} onChange={(e) => setRemote(e.target.checked)} /> Load remote images
      </label>
      <iframe
        title={title}
        sandbox=""
        referrerPolicy="no-referrer"
        srcDoc={`${remote ? REMOTE_IMAGES : noRemote(ownImages ? ` ${window.location.origin}` : '')}${html}`}
      />
    </div>
  );
}
