import { stopIdleServers } from '../helpers/idle-servers';

// Every test file stops the emptied embedded databases it kept for reuse.
afterAll(stopIdleServers);
