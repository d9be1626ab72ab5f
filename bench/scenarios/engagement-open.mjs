import { engagementScenario } from '../lib/engagement-scenario.mjs';

export default engagementScenario('open', {
  description:
    'GET the open pixel of one of 5,000 tracked emails per request (a counted open or one folded by the 60 s burst rule)',
});
