#include <stdio.h>
int tiny_answer(void);
int main(void) {
  printf("tiny says %d\n", tiny_answer());
  return tiny_answer() == 42 ? 0 : 1;
}
