import { readFileSync } from 'node:fs';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { AppError } from '../../../../common/errors';
import { mtomMessage, readEnvelope, readFault, readSoapMessage, requestEnvelope } from '../../../../common/soap';

export interface RepositoryClientOptions {
  /** The remote Document Repository's ITI-41 endpoint (XDS_REPOSITORY_URL). */
  url: string;
  token?: string;
  /** PEM file names: extra trusted CAs, and the client certificate and key for mutual TLS. */
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  timeoutMs: number;
}

const ITI41_ACTION = 'urn:ihe:iti:2007:ProvideAndRegisterDocumentSet-b';
const ITI41_RESPONSE_ACTION = 'urn:ihe:iti:2007:ProvideAndRegisterDocumentSet-bResponse';
/** More than any RegistryResponse needs; a larger answer is not one. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * The outbound side of ITI-41 (CareGraph as a Document Source): one SOAP 1.2
 * request over MTOM/XOP to the configured repository, with its bearer token
 * and TLS settings. Answers the Body's content (the rs:RegistryResponse);
 * whatever keeps a RegistryResponse from coming back (unreachable, a
 * timeout, an HTTP error, a SOAP fault) is an UPSTREAM_ERROR.
 */
export class XdsRepositoryClient {
  /** The endpoint as audited: without credentials a URL might carry. */
  readonly endpoint: string;
  private readonly agent: Agent;

  constructor(private readonly options: RepositoryClientOptions) {
    const url = new URL(options.url);
    url.username = '';
    url.password = '';
    this.endpoint = url.toString();
    this.agent = new Agent({
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      // One TLS context for every connection, as the webhook sender has (a context per connection re-parses the
      // root certificates a custom CA is added to).
      connect: {
        secureContext: createSecureContext({
          ...(options.caFile ? { ca: [...rootCertificates, readFileSync(options.caFile, 'utf8')] } : {}),
          ...(options.certFile && options.keyFile ? { cert: readFileSync(options.certFile), key: readFileSync(options.keyFile) } : {}),
        }),
      },
    });
  }

  /** Sends a ProvideAndRegisterDocumentSetRequest (documents inline as base64, sent as MTOM parts); answers the response payload. */
  async provideAndRegister(payload: string): Promise<string> {
    const { xml } = requestEnvelope(ITI41_ACTION, this.endpoint, payload);
    const message = mtomMessage(xml, 'xdsb:Document');
    let status: number;
    let contentType: string;
    let body: Buffer;
    try {
      const response = await request(this.options.url, {
        method: 'POST',
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.options.timeoutMs),
        headers: {
          'content-type': message.contentType,
          ...(this.options.token ? { authorization: `Bearer ${this.options.token}` } : {}),
        },
        body: message.body,
      });
      status = response.statusCode;
      contentType = String(response.headers['content-type'] ?? '');
      body = await readLimited(response.body);
    } catch (err) {
      throw upstream(`The XDS repository at ${this.endpoint} could not be reached: ${describe(err)}`);
    }
    let answer: ReturnType<typeof readEnvelope>;
    try {
      answer = readEnvelope(readSoapMessage(contentType, body).envelope);
    } catch {
      throw upstream(`The XDS repository at ${this.endpoint} answered HTTP ${status} without a SOAP 1.2 message`);
    }
    const fault = readFault(answer.payload);
    if (fault)
      throw upstream(
        `The XDS repository at ${this.endpoint} answered a SOAP fault (HTTP ${status}, ${fault.code}${fault.subcode ? ` ${fault.subcode}` : ''}): ${fault.reason}`,
        [{ path: 'soap:Fault', message: fault.reason, soapCode: fault.code, ...(fault.subcode ? { soapSubcode: fault.subcode } : {}), httpStatus: status }],
      );
    if (status !== 200 || answer.action !== ITI41_RESPONSE_ACTION)
      throw upstream(`The XDS repository at ${this.endpoint} answered HTTP ${status} with action '${answer.action}', not an ITI-41 response`);
    return answer.payload;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

const upstream = (message: string, details?: Array<{ path: string; message: string; [key: string]: unknown }>) =>
  new AppError('UPSTREAM_ERROR', message, details);

function describe(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return 'timed out';
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? (err as { code?: string })?.code ?? (err as Error)?.message ?? String(err);
}

async function readLimited(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      throw new Error(`the answer is over ${MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
