import { dropTemplate } from './database-template';

export default dropTemplate;
