import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { AppError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import { toAppError } from '../http-errors';
import { BODY_LIMIT_BYTES } from '../security/body';
import type { GraphQLRunner } from './execute';
import { envelope, faultEnvelope, mtomMessage, readEnvelope, readSoapMessage, SoapFault, type SoapRequest } from '../../common/soap';

/**
 * `/xds`: IHE XDS.b over SOAP 1.2, as a Document Repository (`/xds/repository`:
 * ITI-41, ITI-43) and a Document Registry (`/xds/registry`: ITI-42, ITI-18)
 * that dispatch on the WS-Addressing Action like XDS actors do. Thin: SOAP and
 * MTOM here, one GraphQL operation per transaction (xds* fields of the ehr
 * subgraph, which reads the ebXML, decides, stores and audits). Transaction
 * failures are RegistryResponses in the payload (HTTP 200); faults of SOAP,
 * authentication, tenancy and the policy point are SOAP faults.
 */

interface Transaction {
  name: string;
  operation: string;
  field: string;
  responseAction: string;
  /** The response's element whose base64 goes into MTOM parts (ITI-43's documents). */
  binaryElement?: string;
  /** Whether the response is MTOM whatever the request was (ITI-43 requires it). */
  alwaysMtom?: boolean;
}

const transaction = (name: string, kind: 'query' | 'mutation', field: string, responseAction: string, extra: Partial<Transaction> = {}): Transaction => ({
  name,
  operation: `${kind}($request: String!) { ${field}(request: $request) }`,
  field,
  responseAction,
  ...extra,
});

/** Endpoint → WS-Addressing Action → transaction. */
const XDS_ENDPOINTS: Record<string, Record<string, Transaction>> = {
  repository: {
    'urn:ihe:iti:2007:ProvideAndRegisterDocumentSet-b': transaction(
      'ITI-41',
      'mutation',
      'xdsProvideAndRegister',
      'urn:ihe:iti:2007:ProvideAndRegisterDocumentSet-bResponse',
    ),
    'urn:ihe:iti:2007:RetrieveDocumentSet': transaction('ITI-43', 'query', 'xdsRetrieve', 'urn:ihe:iti:2007:RetrieveDocumentSetResponse', {
      binaryElement: 'xdsb:Document',
      alwaysMtom: true,
    }),
  },
  registry: {
    'urn:ihe:iti:2007:RegisterDocumentSet-b': transaction('ITI-42', 'mutation', 'xdsRegister', 'urn:ihe:iti:2007:RegisterDocumentSet-bResponse'),
    'urn:ihe:iti:2007:RegistryStoredQuery': transaction('ITI-18', 'query', 'xdsStoredQuery', 'urn:ihe:iti:2007:RegistryStoredQueryResponse'),
  },
};

const SOAP_TYPE = 'application/soap+xml; charset=utf-8';
const rawBody = express.raw({ type: () => true, limit: BODY_LIMIT_BYTES });

export function xdsRoutes(run: GraphQLRunner): Router {
  const router = Router();
  for (const [endpoint, actions] of Object.entries(XDS_ENDPOINTS)) {
    router.post(`/${endpoint}`, rawBody, async (req: Request, res: Response) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const { envelope: xml, mtom } = readSoapMessage(String(req.headers['content-type'] ?? ''), body);
      const request: SoapRequest = { ...readEnvelope(xml), mtom };
      res.locals.relatesTo = request.messageId;
      const tx = actions[request.action];
      if (!tx)
        throw new SoapFault(
          'Sender',
          'wsa:ActionNotSupported',
          `Action '${request.action}' is not served at /xds/${endpoint} (${Object.keys(actions).join(', ')})`,
        );
      const data = await run<Record<string, string>>(req, tx.operation, { request: request.payload });
      const answer = envelope(tx.responseAction, request.messageId, data[tx.field]);
      if (tx.alwaysMtom || request.mtom) {
        const message = mtomMessage(answer, tx.binaryElement);
        res.status(200).type(message.contentType).send(message.body);
      } else res.status(200).type(SOAP_TYPE).send(answer);
    });
  }
  router.all('/{*rest}', (req) => {
    throw new AppError('NOT_FOUND', `No XDS endpoint at ${req.baseUrl}${req.path}: POST /xds/repository or /xds/registry`);
  });
  return router;
}

/** A SOAP 1.2 fault for every failure under /xds, auth and body parsing included; the HTTP status is the error's. */
export function xdsErrorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return void res.end();
    const relatesTo = res.locals.relatesTo as string | undefined;
    if (err instanceof SoapFault) {
      res
        .status(err.code === 'Receiver' ? 500 : 400)
        .type(SOAP_TYPE)
        .send(faultEnvelope(err.code, err.subcode, err.message, relatesTo));
      return;
    }
    let error = toAppError(err);
    if (!error) {
      logger.error({ err, requestId: req.requestId, path: req.path }, 'unhandled XDS error');
      error = new AppError('INTERNAL_ERROR', 'Internal server error');
    }
    res
      .status(error.status)
      .type(SOAP_TYPE)
      .send(faultEnvelope(error.status >= 500 ? 'Receiver' : 'Sender', `cg:${error.code}`, error.message, relatesTo));
  };
}
