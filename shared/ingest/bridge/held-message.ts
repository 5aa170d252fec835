/** A stream message the bridge pulled and has not yet acked, naked or terminated. */
import type { JsMsg } from '@nats-io/jetstream';
import type { EncodedForQueue } from '../queue-message.ts';

export interface HeldMessage {
  msg: JsMsg;
  seq: number;
  subject: string;
  /** The stream's delivery count for this delivery (1 on the first). */
  deliveries: number;
  /** The SQS FIFO group, once the subject is parsed. */
  group?: string;
  encoded?: EncodedForQueue;
  settled?: boolean;
}

export function holdMessage(msg: JsMsg): HeldMessage {
  return {
    msg,
    seq: msg.seq,
    subject: msg.subject,
    deliveries: msg.info.deliveryCount,
  };
}
