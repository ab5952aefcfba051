import { ApiKey } from '../auth/api-key.entity';
import { Category } from '../pets/category.entity';
import { Pet } from '../pets/pet.entity';
import { InventoryItem } from '../pets/inventory-item.entity';
import { IdempotencyKey } from '../store/idempotency-key.entity';
import { Order } from '../store/order.entity';

export const ENTITIES = [ApiKey, Category, Pet, InventoryItem, Order, IdempotencyKey];
