import { describe, expect, it } from 'vitest';
import { DLQ_TOPIC_CHOICES } from '@gatehouse/cli';
import { TOPIC_ROLES, topicNames } from '@gatehouse/events';

describe('dlq --topic', () => {
  it('offers exactly the Gatehouse topics, by their names without the gatehouse. prefix', () => {
    expect(DLQ_TOPIC_CHOICES.split(', ')).toEqual(TOPIC_ROLES.map((role) => topicNames('')[role].replace(/^gatehouse\./, '')));
  });
});
