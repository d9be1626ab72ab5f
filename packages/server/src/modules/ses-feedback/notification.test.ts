import { describe, expect, it } from 'vitest';
import { parseSesNotification } from './notification.js';

const emailId = '01935f2e-7c1a-7b3e-9a55-0d1f2a3b4c5d';
const mail = { messageId: '0102-abc-000000', commonHeaders: { messageId: `<${emailId}@mail.example.com>` } };

describe('parseSesNotification', () => {
  it('reads hard and soft bounces with their diagnostic, from either notification style', () => {
    expect(
      parseSesNotification(
        JSON.stringify({
          notificationType: 'Bounce',
          bounce: {
            bounceType: 'Permanent',
            bounceSubType: 'General',
            bouncedRecipients: [{ emailAddress: 'a@b.example', diagnosticCode: 'smtp; 550 no such user' }],
          },
          mail,
        }),
      ),
    ).toEqual({
      kind: 'bounce',
      bounce: 'hard',
      diagnostic: 'smtp; 550 no such user',
      messageId: '0102-abc-000000',
      emailId,
      recipients: ['a@b.example'],
    });
    const soft = parseSesNotification(
      JSON.stringify({ eventType: 'Bounce', bounce: { bounceType: 'Transient', bounceSubType: 'MailboxFull' }, mail }),
    );
    expect(soft).toMatchObject({ kind: 'bounce', bounce: 'soft', diagnostic: 'Transient MailboxFull' });
    const undetermined = parseSesNotification(
      JSON.stringify({ notificationType: 'Bounce', bounce: { bounceType: 'Undetermined' }, mail }),
    );
    expect(undetermined).toMatchObject({ bounce: 'soft' });
  });

  it('reads complaints and deliveries; matches by the Message-ID header when SES has no id of ours', () => {
    expect(
      parseSesNotification(
        JSON.stringify({
          notificationType: 'Complaint',
          complaint: { complaintFeedbackType: 'abuse', complainedRecipients: [{ emailAddress: 'c@d.example' }] },
          mail: { headers: [{ name: 'Message-ID', value: `<${emailId}@x.example>` }] },
        }),
      ),
    ).toEqual({ kind: 'complaint', feedbackType: 'abuse', messageId: null, emailId, recipients: ['c@d.example'] });
    expect(
      parseSesNotification(
        JSON.stringify({ notificationType: 'Delivery', delivery: { recipients: ['e@f.example'] }, mail }),
      ),
    ).toMatchObject({ kind: 'delivery', recipients: ['e@f.example'] });
  });

  it('ignores other kinds, foreign Message-IDs and anything unreadable', () => {
    expect(parseSesNotification(JSON.stringify({ eventType: 'Open', mail }))).toBeUndefined();
    expect(parseSesNotification('not json')).toBeUndefined();
    expect(parseSesNotification(JSON.stringify({ notificationType: 'Delivery' }))).toBeUndefined();
    const foreign = parseSesNotification(
      JSON.stringify({ notificationType: 'Delivery', mail: { commonHeaders: { messageId: '<abc@other.example>' } } }),
    );
    expect(foreign).toBeUndefined();
  });
});
