import { Router } from 'express';
import { notFound } from '../../common/errors';
import { identityOf } from '../auth';
import type { GraphQLRunner } from './execute';
import { onlyQueryParams, pathId } from './params';

/** `/api/ehr/…`: the clinical record spec's REST paths. */
export function ehrRoutes(run: GraphQLRunner): Router {
  const router = Router();

  router.get('/patients/:id', async (req, res) => {
    identityOf(req, { requireTenantHeader: true });
    onlyQueryParams(req, []);
    const id = pathId(req, 'id');
    const data = await run(req, `query($id: ID!) { patient(id: $id) { id ehrId name { given family } birthDate gender contact { phone email } } }`, { id });
    if (!data.patient) throw notFound('Patient', id);
    res.json(data.patient);
  });

  return router;
}
