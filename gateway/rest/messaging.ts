import { Router } from 'express';
import { notFound, validationError, type ErrorDetail } from '../../common/errors';
import type { GraphQLRunner } from './execute';
import { onlyQueryParams, pathId, queryInt, queryParam } from './params';

const MESSAGE_FIELDS = 'id patientId templateId channel body status error createdAt updatedAt';
const TEMPLATE_FIELDS = 'id version name channel language body variables { name type required }';

/** `/v1/…`: the messaging spec's REST paths, each a thin translation to one GraphQL operation. */
export function messagingRoutes(run: GraphQLRunner): Router {
  const router = Router();

  router.get('/messages/:id', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(req, `query($id: ID!) { message(id: $id) { ${MESSAGE_FIELDS} } }`, { id: pathId(req, 'id') });
    res.json(data.message);
  });

  router.get('/messages', async (req, res) => {
    onlyQueryParams(req, ['patientId', 'limit', 'offset']);
    const details: ErrorDetail[] = [];
    const limit = queryInt(req, 'limit', details);
    const offset = queryInt(req, 'offset', details);
    if (details.length > 0) throw validationError('Invalid query parameters', details);
    const data = await run(
      req,
      `query($patientId: ID, $limit: Int, $offset: Int) { messages(patientId: $patientId, limit: $limit, offset: $offset) { data { ${MESSAGE_FIELDS} } pagination { limit offset total } } }`,
      { patientId: queryParam(req, 'patientId'), limit, offset },
    );
    res.json(data.messages);
  });

  router.get('/patients/:id', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(
      req,
      `query($id: ID!) { patient(id: $id) { id ehrId name { given family } birthDate gender contact { phone email }
         preferences { channels { sms email } language quietHours { start end timezone } } } }`,
      { id: pathId(req, 'id') },
    );
    if (!data.patient) throw notFound('Patient', req.params.id as string);
    res.json(data.patient);
  });

  router.get('/templates', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(req, `{ templates { data { ${TEMPLATE_FIELDS} } } }`);
    res.json(data.templates);
  });

  router.get('/templates/:id', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(req, `query($id: ID!) { template(id: $id) { ${TEMPLATE_FIELDS} } }`, { id: pathId(req, 'id') });
    res.json(data.template);
  });

  router.get('/appointments', async (req, res) => {
    onlyQueryParams(req, ['from', 'to']);
    const data = await run(
      req,
      `query($from: String, $to: String) { appointments(from: $from, to: $to) { data { id patientId start end status location } } }`,
      { from: queryParam(req, 'from'), to: queryParam(req, 'to') },
    );
    res.json(data.appointments);
  });

  return router;
}

