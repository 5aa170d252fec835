/**
 * The queue and claim-check clients as the configuration says: AWS's
 * endpoints by default, SQS_ENDPOINT / S3_ENDPOINT (path-style S3) for an
 * emulator.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import {
  AwsJson1_0Protocol,
  JsonCodec2,
  JsonShapeSerializer,
} from '@aws-sdk/core/protocols';
import type { Config } from '../config.ts';

type JsonProtocolSettings = ConstructorParameters<typeof AwsJson1_0Protocol>[0];
type RequestSerializer = ReturnType<JsonCodec2['createSerializer']>;
type JsonSettings = JsonCodec2['settings'];

/**
 * The SDK's JSON codec for SQS with a cheaper request serializer. Its
 * default one (JsonShapeSerializer2) escapes each string one character at a
 * time in JavaScript: a queued inventory's body is a 430 KB base64 string,
 * and that loop was 3 ms of CPU per SendMessageBatch, the bridge's largest
 * cost per message. The SDK's JSON.stringify serializer (the former
 * default, still exported) writes the same JSON natively in 0.7 ms; its
 * text is handed on as UTF-8 bytes, as the default serializer's is, so the
 * body is encoded once, not again for the content length, the SigV4
 * payload hash and the socket. Responses are read by the default
 * deserializer (JSON.parse).
 */
class SqsJsonCodec extends JsonCodec2 {
  override createSerializer(): RequestSerializer {
    return new Utf8JsonSerializer(this.settings, this.serdeContext);
  }
}

class Utf8JsonSerializer implements RequestSerializer {
  readonly #json: JsonShapeSerializer;

  constructor(
    settings: JsonSettings,
    serdeContext:
      | Parameters<RequestSerializer['setSerdeContext']>[0]
      | undefined,
  ) {
    this.#json = new JsonShapeSerializer(settings);
    if (serdeContext !== undefined) this.#json.setSerdeContext(serdeContext);
  }

  write(...args: Parameters<RequestSerializer['write']>): void {
    this.#json.write(...args);
  }

  flush(): Uint8Array {
    return Buffer.from(this.#json.flush(), 'utf8');
  }

  setSerdeContext(
    serdeContext: Parameters<RequestSerializer['setSerdeContext']>[0],
  ): void {
    this.#json.setSerdeContext(serdeContext);
  }
}

/**
 * SQS's own protocol (AWS JSON 1.0) with the codec above, through the
 * protocol's `jsonCodec` setting; the client constructs it with its own
 * settings (service target, error registries). Same wire format.
 */
export class SqsJsonProtocol extends AwsJson1_0Protocol {
  constructor(settings: JsonProtocolSettings) {
    super({
      ...settings,
      jsonCodec: new SqsJsonCodec({
        // AwsJsonRpcProtocol's own default: epoch seconds unless a member says.
        timestampFormat: { useTrait: true, default: 7 },
        jsonName: false,
      }),
    });
  }
}

/**
 * Every SQS client of the backend (the bridge, the local poller, tests):
 * the protocol above, and `md5: false`. The SDK's MD5 check hashes each
 * sent body again (0.8 ms per 430 KB body) to compare with the digest SQS
 * returns; SigV4 already signs the body's SHA-256, which SQS verifies before
 * it accepts the message, and a gzip payload carries its own CRC-32, checked
 * when the sync inflates it.
 */
export function sqsClient(
  config: Omit<SQSClientConfig, 'protocol' | 'md5'>,
): SQSClient {
  return new SQSClient({ ...config, protocol: SqsJsonProtocol, md5: false });
}

export function sqsFromConfig(config: Config): SQSClient {
  return sqsClient({
    region: config.AWS_REGION,
    ...(config.SQS_ENDPOINT ? { endpoint: config.SQS_ENDPOINT } : {}),
  });
}

export function s3FromConfig(config: Config): S3Client {
  return new S3Client({
    region: config.AWS_REGION,
    ...(config.S3_ENDPOINT
      ? { endpoint: config.S3_ENDPOINT, forcePathStyle: true }
      : {}),
  });
}
