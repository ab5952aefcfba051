/** The query both explorers open with: the README's first example (test/graphql/sandbox.cases.ts). */
export const EXAMPLE_OPERATION = `query FirstPets {
  pets(first: 5, filter: { status: AVAILABLE }) {
    nodes { id name status category { name } inventory { quantity status } }
    pageInfo { hasNextPage endCursor }
    totalCount
  }
}
`;
