// campaign-100k at 20,000 contacts (the kill at 10,000): the same checks and same-run baseline in
// a fifth of the time, for iterating on delivery. `--scenario campaign-20k:plain`.
import { campaignScenario } from './campaign-100k.mjs';

export default campaignScenario({ name: 'campaign-20k', total: 20_000, killAt: 10_000 });
