import type { Project } from '@pigeon/sdk';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { account } from '../api';
import { useProject } from '../session';
import { ConfirmDialog } from '../ui/dialog';
import { CopyButton, ErrorNote, Notice, PageHeader, Secret } from '../ui/kit';

/** The project's two keys: the public one for browsers and apps, the secret one (OWNER and ADMIN only). */
export default function KeysPage() {
  const { project, canManage } = useProject();
  const queryClient = useQueryClient();
  const [confirm, setConfirm] = useState(false);
  const [fresh, setFresh] = useState<Project | null>(null);
  const regenerate = useMutation({
    mutationFn: () => account.me.regenerateKeys(project.id),
    onSuccess: async (updated) => {
      setConfirm(false);
      setFresh(updated);
      await queryClient.invalidateQueries({ queryKey: ['projects'] });
    },
  });
  const origin = window.location.origin;
  return (
    <>
      <PageHeader title="API keys">
        {canManage ? (
          <button type="button" className="danger" onClick={() => setConfirm(true)}>
            Regenerate keys
          </button>
        ) : null}
      </PageHeader>
      <ErrorNote error={regenerate.error} />
      {fresh?.secretKey ? (
        <Notice tone="ok">
          <strong>New keys are in use.</strong> The old ones stopped working. Copy the new secret key into your servers
          now:
          <Secret value={fresh.secretKey} label="New secret key" />
        </Notice>
      ) : null}
      <section className="card" aria-labelledby="public-key">
        <h2 id="public-key">Public key</h2>
        <p className="muted">Safe in browsers and apps: it may only track events (POST /v1/track).</p>
        <div className="secret">
          <code>{project.publicKey}</code> <CopyButton value={project.publicKey} />
        </div>
      </section>
      <section className="card" aria-labelledby="secret-key">
        <h2 id="secret-key">Secret key</h2>
        {project.secretKey ? (
          <>
            <p className="muted">Every endpoint. Keep it on your servers; never in a browser or an app.</p>
            <Secret value={project.secretKey} label="Secret key" />
          </>
        ) : (
          <Notice>Members do not see the secret key; an OWNER or ADMIN of the project does.</Notice>
        )}
      </section>
      <section className="card" aria-labelledby="first-send">
        <h2 id="first-send">Send with the SDK</h2>
        <pre>{`import { Pigeon } from '@pigeon/sdk';

const pigeon = new Pigeon({ apiKey: process.env.PIGEON_SECRET_KEY, baseUrl: '${origin}' });
await pigeon.emails.send({ to: 'you@example.com', from: 'hello@your-domain', subject: 'Hi', body: '<p>Hello</p>' });`}</pre>
      </section>
      <ConfirmDialog
        open={confirm}
        title="Regenerate both keys?"
        confirm="Regenerate keys"
        busy={regenerate.isPending}
        onConfirm={() => regenerate.mutate()}
        onClose={() => setConfirm(false)}
      >
        <p>
          The current public and secret keys stop working at once: every server and app using them fails until it has
          the new ones.
        </p>
      </ConfirmDialog>
    </>
  );
}
