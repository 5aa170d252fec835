/**
 * A record as Lambda's SQS FIFO event source hands it to the sync handler:
 * the subject and a fresh stream sequence as attributes (plus any `extra`
 * string attributes), the agent's group as its message group.
 */
import { randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import { QueueAttribute } from '../../shared/ingest/queue-message.ts';

let seq = 0;

export function sqsRecordOf(
  subject: string,
  body: string,
  extra: Record<string, string> = {},
): SQSRecord {
  seq++;
  const attribute = (value: string, dataType = 'String') => ({
    dataType,
    stringValue: value,
    stringListValues: [],
    binaryListValues: [],
  });
  const attributes: SQSRecord['messageAttributes'] = {
    [QueueAttribute.subject]: attribute(subject),
    [QueueAttribute.streamSeq]: attribute(String(seq), 'Number'),
  };
  for (const [name, value] of Object.entries(extra)) {
    attributes[name] = attribute(value);
  }
  return {
    messageId: randomUUID(),
    receiptHandle: randomUUID(),
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
      SequenceNumber: String(seq).padStart(20, '0'),
      MessageGroupId: subject.split('.').slice(1, 4).join('.'),
      MessageDeduplicationId: `test:${seq}`,
    },
    messageAttributes: attributes,
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:test.fifo',
    awsRegion: 'us-east-1',
  };
}
