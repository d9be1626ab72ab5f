import type { AudienceType, Campaign, CampaignInput, ConditionTree, Template } from '@pigeon/sdk';
import { useEffect, useState } from 'react';

export type ContentType = Campaign['type'];

/** The compose form's state: the campaign's fields as the inputs hold them ('' for an empty optional one). */
export interface ComposeValues {
  name: string;
  description: string;
  subject: string;
  body: string;
  from: string;
  fromName: string;
  replyTo: string;
  type: ContentType;
  templateId: string | null;
  audienceType: AudienceType;
  segmentId: string;
  audienceCondition: ConditionTree | null;
  /** Kept as the campaign has it (set through the API; the form has no topic picker yet). */
  topicId: string | null;
}

export function blankValues(defaultFrom: string | null): ComposeValues {
  return {
    name: '',
    description: '',
    subject: '',
    body: '',
    from: defaultFrom ?? '',
    fromName: '',
    replyTo: '',
    type: 'MARKETING',
    templateId: null,
    audienceType: 'ALL',
    segmentId: '',
    audienceCondition: null,
    topicId: null,
  };
}

export function valuesOf(c: Campaign): ComposeValues {
  return {
    name: c.name,
    description: c.description ?? '',
    subject: c.subject,
    body: c.body,
    from: c.from,
    fromName: c.fromName ?? '',
    replyTo: c.replyTo ?? '',
    type: c.type,
    templateId: c.templateId,
    audienceType: c.audienceType,
    segmentId: c.segmentId ?? '',
    audienceCondition: c.audienceCondition,
    topicId: c.topicId,
  };
}

/** A template's content copied into the form (the campaign remembers which template it came from). */
export function fromTemplate(values: ComposeValues, t: Template): ComposeValues {
  return {
    ...values,
    name: values.name || t.name,
    subject: t.subject,
    body: t.body,
    from: t.from,
    fromName: t.fromName ?? '',
    replyTo: t.replyTo ?? '',
    type: t.type,
    templateId: t.id,
  };
}

const orNull = (s: string) => (s.trim() ? s.trim() : null);

/** The audience as the API takes it: only the field its type uses. */
export function audienceOf(v: ComposeValues) {
  return {
    type: v.type,
    audienceType: v.audienceType,
    segmentId: v.audienceType === 'SEGMENT' ? v.segmentId || null : null,
    audienceCondition: v.audienceType === 'FILTERED' ? v.audienceCondition : null,
    topicId: v.topicId,
  };
}

export function inputOf(v: ComposeValues): CampaignInput {
  return {
    name: v.name,
    description: orNull(v.description),
    subject: v.subject,
    body: v.body,
    from: v.from,
    fromName: orNull(v.fromName),
    replyTo: orNull(v.replyTo),
    templateId: v.templateId,
    ...audienceOf(v),
  };
}

/**
 * `value`, once it has stayed the same for `ms` (one request when typing pauses, not one per key);
 * compared as JSON, so an object made anew on each render is not a change.
 */
export function useDebounced<T>(value: T, ms = 400): T {
  const key = JSON.stringify(value);
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(JSON.parse(key) as T), ms);
    return () => clearTimeout(timer);
  }, [key, ms]);
  return settled;
}
