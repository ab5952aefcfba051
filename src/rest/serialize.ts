import type { Pet } from '../pets/pet.entity';
import type { Order } from '../store/order.entity';

/**
 * REST carries ids as JSON numbers (docs/contract.md §3): they come from sequences and stay below 2^53,
 * so the conversion from PostgreSQL's bigint strings is exact.
 */
const idNumber = (id: string) => Number(id);

export const restPet = (pet: Pet) => ({
  id: idNumber(pet.id),
  name: pet.name,
  categoryId: idNumber(pet.categoryId),
  status: pet.status,
});

export const restOrder = (order: Order) => ({
  id: idNumber(order.id),
  petId: idNumber(order.petId),
  quantity: order.quantity,
  shipDate: order.shipDate ? order.shipDate.toISOString() : null,
  complete: order.complete,
});
