import type { Campaign } from '@pigeon/sdk';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { projectPath, useProject } from '../../session';
import { ConfirmDialog } from '../../ui/dialog';
import { ErrorNote, Field, Form, Notice } from '../../ui/kit';
import { localToIso, toLocalInput, viewerZone } from './format';

/**
 * A saved DRAFT's last steps: a test to one address, then send now or at a time in the viewer's
 * zone. Both save the form first when it has unsaved changes (`save`), so what goes out is what is shown.
 */
export function SendPanel({ campaign, save }: { campaign: Campaign; save: () => Promise<Campaign> }) {
  return (
    <>
      <TestSend campaign={campaign} save={save} />
      <SendOrSchedule campaign={campaign} save={save} />
    </>
  );
}

function TestSend({ campaign, save }: { campaign: Campaign; save: () => Promise<Campaign> }) {
  const { project, api } = useProject();
  const [email, setEmail] = useState('');
  const test = useMutation({
    mutationFn: async () => {
      await save();
      return api.campaigns.test(campaign.id, email.trim());
    },
  });
  return (
    <section className="card" aria-labelledby="test-title">
      <h2 id="test-title">Send a test</h2>
      <p className="muted">One message to one address, with that contact's data when there is a contact for it.</p>
      <Form className="inline-form" onSubmit={() => test.mutate()}>
        <Field
          label="Test address"
          name="email"
          type="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={test.error}
        />
        <div className="field">
          <button type="submit" disabled={test.isPending}>
            Send test
          </button>
        </div>
      </Form>
      <ErrorNote error={test.error} />
      {test.data ? (
        <Notice tone="ok">
          A test is on its way to {test.data.email}:{' '}
          <Link to={projectPath(project.id, `emails/${test.data.emailId}`)}>follow it in the mail log</Link>.
        </Notice>
      ) : null}
    </section>
  );
}

/** Send now or at a time; for a SCHEDULED campaign, another time or now instead (`title` says which). */
export function SendOrSchedule({
  campaign,
  save,
  title = 'Send',
}: {
  campaign: Campaign;
  save: () => Promise<Campaign>;
  title?: string;
}) {
  const { api } = useProject();
  const queryClient = useQueryClient();
  const [when, setWhen] = useState('now');
  const [at, setAt] = useState(() => toLocalInput(new Date(Date.now() + 3_600_000)));
  const [confirming, setConfirming] = useState(false);
  const zone = viewerZone();
  const scheduledFor = when === 'later' ? localToIso(at) : null;
  const send = useMutation({
    mutationFn: async () => {
      await save();
      return api.campaigns.send(campaign.id, { scheduledFor });
    },
    onSuccess: () => {
      setConfirming(false);
      queryClient.invalidateQueries({ queryKey: ['campaign', campaign.id] });
      queryClient.invalidateQueries({ queryKey: ['campaign-stats', campaign.id] });
      queryClient.invalidateQueries({ queryKey: ['campaigns'] });
    },
    onError: () => setConfirming(false),
  });
  return (
    <section className="card" aria-labelledby="send-title">
      <h2 id="send-title">{title}</h2>
      <Form onSubmit={() => setConfirming(true)}>
        <fieldset>
          <legend>When</legend>
          <label className="choice">
            <input type="radio" name="when" checked={when === 'now'} onChange={() => setWhen('now')} /> Now
          </label>
          <label className="choice">
            <input type="radio" name="when" checked={when === 'later'} onChange={() => setWhen('later')} /> At a time
          </label>
          {when === 'later' ? (
            <Field
              label={`Send at (${zone})`}
              name="scheduledFor"
              type="datetime-local"
              required
              step={1}
              min={toLocalInput(new Date())}
              value={at}
              onChange={(e) => setAt(e.target.value)}
              error={send.error}
              hint={`Your time zone, ${zone}; the campaign waits until then and can be cancelled meanwhile.`}
            />
          ) : null}
        </fieldset>
        <button type="submit" className="primary" disabled={send.isPending || (when === 'later' && !scheduledFor)}>
          {when === 'now' ? 'Send now…' : 'Schedule…'}
        </button>
      </Form>
      <ErrorNote error={send.error} />
      <ConfirmDialog
        open={confirming}
        title={when === 'now' ? 'Send this campaign now?' : 'Schedule this campaign?'}
        confirm={when === 'now' ? 'Send now' : 'Schedule'}
        busy={send.isPending}
        onConfirm={() => send.mutate()}
        onClose={() => setConfirming(false)}
      >
        <p>
          “{campaign.subject}” goes to every contact of the audience
          {scheduledFor ? ` at ${new Date(scheduledFor).toLocaleString()} (${zone})` : ' now'}. The audience is fixed
          when sending starts, and a sent message cannot be called back.
        </p>
      </ConfirmDialog>
    </section>
  );
}
