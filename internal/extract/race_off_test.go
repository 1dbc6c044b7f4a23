//go:build !race

package extract

// raceSeeds is how many files TestQuestionsAgreeWithAReference draws.
const raceSeeds = 120
